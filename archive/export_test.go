package archive

import (
	"io"
	"net/http"
	"time"
)

type discardRW struct{ h http.Header }

func (d discardRW) Header() http.Header       { return d.h }
func (discardRW) Write(p []byte) (int, error) { return len(p), nil }
func (discardRW) WriteHeader(int)             {}

// NewThrottledWriterForTest exposes the pacing writer with a fake clock.
func NewThrottledWriterForTest(_ io.Writer, rate int64, now func() time.Time, sleep func(time.Duration)) io.Writer {
	return &throttledWriter{countingWriter: &countingWriter{ResponseWriter: discardRW{h: http.Header{}}},
		rate: rate, start: now(), now: now, sleep: sleep}
}
