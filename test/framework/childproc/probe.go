package childproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Probe GETs url (a child's health or readiness endpoint) within 2 s and
// returns nil when it answers 200; otherwise the error, or the status and
// the start of the body.
func Probe(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, body)
	}
	return nil
}
