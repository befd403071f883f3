package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// leading waits until the running operator leads: its controllers run
// (their work queues show in its metrics). A kill aimed at a change made
// before then waits out the leader lease and the cache sync first, and may
// miss. It returns at once without a metrics address ({metrics} in the
// command line), and after timeout whatever it saw (the kill then goes
// ahead, and may miss: that is counted). It does not wait for the queues to
// empty: the operator's priority queue puts a change of a custom resource
// ahead of the restart's re-reconciling of everything.
func (s *supervisor) leading(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.mu.Lock()
		addr, up := s.metrics, s.proc != nil
		s.mu.Unlock()
		if addr == "" {
			return
		}
		if _, err := queueDepth(ctx, "http://"+addr+"/metrics"); up && err == nil {
			return
		}
		sleep(ctx, 250*time.Millisecond)
	}
}

// queueDepth sums workqueue_depth over the operator's own controllers
// (named chartkeeper-<Kind>.<group>).
func queueDepth(ctx context.Context, url string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "workqueue_depth{") || !strings.Contains(line, `name="chartkeeper-`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, err
		}
		sum, found = sum+v, true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%s: no workqueue_depth of a chartkeeper controller", url)
	}
	return sum, nil
}
