package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// progress shows a bar on a terminal and plain lines otherwise (CI logs, pipes).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	bar   *progressbar.ProgressBar
	total int
	done  int
	last  time.Time
}

func newProgress(w io.Writer, label string) *progress { return &progress{w: w, label: label} }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) Start(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
	if isTerminal(p.w) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.label), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish())
	}
}

func (p *progress) Step(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.bar != nil {
		p.bar.Add(1) //nolint:errcheck
		return
	}
	// Plain lines, at most one a second plus the last.
	if time.Since(p.last) >= time.Second || p.done == p.total {
		p.last = time.Now()
		fmt.Fprintf(p.w, "%s: %d/%d steps (%s)\n", p.label, p.done, p.total, name)
	}
}

func (p *progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish() //nolint:errcheck
	}
}
