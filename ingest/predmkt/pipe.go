package predmkt

import (
	"errors"
	"io"
)

// decodedLine is one line of a market-channel capture, decoded ahead of its apply.
type decodedLine struct {
	line  int
	local int64
	msgs  []wsMsg
	err   error
}

// pipeBatch lines go to the apply side at once: a channel send per line cost more
// than the decoding it hands over.
const pipeBatch = 256

// errPipeStop stops the decoding goroutine when the apply side has stopped.
var errPipeStop = errors.New("stopped")

// decodeLines reads a capture as captureLines does and calls apply with each line's
// decoded messages (or the error that made the line undecodable), in line order. The
// decoding (the receive-time prefix and the JSON, the larger half of a line's cost)
// runs on its own goroutine, a few batches ahead of apply, which keeps everything
// stateful (books, sequence numbers, metadata, staging) on the caller's goroutine in
// line order: with two cores the two halves run side by side. names (the tape's
// interned asset ids) belongs to the decoding goroutine until decodeLines returns.
// When apply returns an error decoding stops and that error is returned; otherwise a
// read error of the capture (a truncated compressed file) is returned after every
// line before it has been applied, as captureLines would.
func decodeLines(r io.Reader, file string, names map[string]string, apply func(d *decodedLine) error) error {
	ch := make(chan []decodedLine, 4)
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(ch)
		buf := make([]decodedLine, 0, pipeBatch)
		send := func() bool {
			select {
			case ch <- buf:
				buf = make([]decodedLine, 0, pipeBatch)
				return true
			case <-done:
				return false
			}
		}
		err := captureLines(r, file, func(line int, b []byte, doc bool) error {
			d := decodedLine{line: line}
			frame := b
			if !doc {
				d.local, frame, d.err = splitPrefix(b)
			}
			if d.err == nil {
				d.msgs, d.err = decodeFrame(frame, names)
			}
			buf = append(buf, d)
			if len(buf) == pipeBatch && !send() {
				return errPipeStop
			}
			return nil
		})
		if len(buf) > 0 && !send() {
			return
		}
		// Read by the caller after the channel closes (the close orders it).
		readErr = err
	}()
	defer func() {
		close(done)
		for range ch { //nolint:revive // drain, so that the decoding goroutine ends
		}
	}()
	for batch := range ch {
		for i := range batch {
			if err := apply(&batch[i]); err != nil {
				return err
			}
		}
	}
	return readErr
}
