package cli_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// procStat reads a process's CPU time (user + system) and resident memory from /proc.
func procStat(b *testing.B, pid int) (cpu time.Duration, rssKB int64) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat, after pid and comm
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	cpu = time.Duration(ut+stt) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			rssKB, _ = strconv.ParseInt(strings.Fields(l)[1], 10, 64)
		}
	}
	return cpu, rssKB
}

// BenchmarkRecordPredmkt: `mdq record predmkt` (a real process) fed 2,000 messages a
// second by a local server for 20 s; reports the recorder's CPU share of one core
// and its resident memory after 5 s and at the end (flat memory: the two match).
func BenchmarkRecordPredmkt(b *testing.B) {
	const rate, secs = 2000, 20
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
		ts := time.Now().UnixMilli()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; {
			<-tick.C
			for k := 0; k < rate/100; k++ {
				i++
				tok := 1001 + i%20
				var msg string
				if i%100 == 0 {
					msg = fmt.Sprintf(`{"event_type":"book","asset_id":"%d","market":"0x01","timestamp":"%d","bids":[{"price":"0.4","size":"100"},{"price":"0.39","size":"250"}],"asks":[{"price":"0.6","size":"100"}]}`, tok, ts+int64(i))
				} else {
					msg = fmt.Sprintf(`{"event_type":"price_change","market":"0x01","timestamp":"%d","price_changes":[{"asset_id":"%d","price":"0.4%d","side":"BUY","size":"%d","best_bid":"0.4","best_ask":"0.6"}]}`, ts+int64(i), tok, i%10, i%500)
				}
				if c.WriteMessage(websocket.TextMessage, []byte(msg)) != nil {
					return
				}
			}
		}
	}))
	defer srv.Close()
	var markets []string
	for i := 0; i < 20; i++ {
		markets = append(markets, strconv.Itoa(1001+i))
	}
	for n := 0; n < b.N; n++ {
		dir := filepath.Join(b.TempDir(), "lake")
		cmd := exec.Command(mdqBinary(b), "record", "predmkt", "--data", dir, "--ws", "ws"+strings.TrimPrefix(srv.URL, "http"),
			"--markets", strings.Join(markets, ","))
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		cpu0, rss5 := procStat(b, cmd.Process.Pid)
		t0 := time.Now()
		time.Sleep(secs * time.Second)
		cpu1, rssEnd := procStat(b, cmd.Process.Pid)
		wall := time.Since(t0)
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
		cmd.Wait()                          //nolint:errcheck
		b.ReportMetric(100*float64(cpu1-cpu0)/float64(wall), "%cpu")
		b.ReportMetric(float64(rss5)/1024, "MB-rss@5s")
		b.ReportMetric(float64(rssEnd)/1024, "MB-rss@end")
	}
}
