package envvar

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// String returns the variable's value, or def when it is unset or empty.
func String(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Int returns the variable as a positive integer, or def when it is unset
// or empty. Anything else is an error naming the variable.
func Int(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	return n, nil
}

// Duration returns the variable as a non-negative Go duration ("90s",
// "3m"); set is false when it is unset or empty (d is then 0). What zero
// means is the caller's to say.
func Duration(name string) (d time.Duration, set bool, err error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, false, nil
	}
	d, err = time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false, fmt.Errorf("%s=%q: want a duration such as 90s or 3m, not negative", name, v)
	}
	return d, true, nil
}
