package release

import "unicode/utf8"

// Message limits. The API server rejects an Event whose note is over 1,024
// bytes (the Event is then lost), and a condition message over 32 KiB.
const (
	maxEventNote = 1024
	// maxMessage keeps condition messages readable while holding a long
	// error whole (a chart's install that fails on 27 RBAC rules, say).
	maxMessage = 8 << 10
)

// eventShortened ends an Event note that was cut: the condition the same
// step writes holds the whole message.
const eventShortened = "… (shortened, see the conditions)"

// shorten returns s if it fits in limit bytes, else its start cut at a
// rune boundary with tail appended, limit bytes at most in all.
func shorten(s string, limit int, tail string) string {
	if len(s) <= limit {
		return s
	}
	n := max(limit-len(tail), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + tail
}
