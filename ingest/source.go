// Package ingest holds what every loader of real data shares: opening an input (a file,
// stdin, gzip, zstd or LZ4), reading it line by line with FILE:LINE errors, staging
// rows in DuckDB and merging them into the lake's partitions idempotently, and the
// closing summary. The area loaders live in ingest/<area>; the demo generator in
// ingest/demo.
package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Magic numbers of the compressed formats, so stdin and misnamed files are read right.
var (
	magicGzip = []byte{0x1f, 0x8b}
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicLZ4  = []byte{0x04, 0x22, 0x4d, 0x18}
)

// Open opens one input for reading: "-" is stdin; gzip, zstd and LZ4-framed content is
// decompressed, recognised by its magic bytes (whatever the file is called).
func Open(name string, stdin io.Reader) (io.ReadCloser, error) {
	var raw io.ReadCloser
	if name == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		raw = io.NopCloser(stdin)
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		raw = f
	}
	br := bufio.NewReaderSize(raw, 1<<20)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, magicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			raw.Close()
			return nil, fmt.Errorf("%s: gzip: %w", name, err)
		}
		return readCloser{zr, func() error { zr.Close(); return raw.Close() }}, nil
	case bytes.HasPrefix(head, magicZstd):
		zr, err := zstd.NewReader(br)
		if err != nil {
			raw.Close()
			return nil, fmt.Errorf("%s: zstd: %w", name, err)
		}
		return readCloser{zr, func() error { zr.Close(); return raw.Close() }}, nil
	case bytes.HasPrefix(head, magicLZ4):
		return readCloser{lz4.NewReader(br), raw.Close}, nil
	}
	if strings.HasSuffix(name, ".gz") || strings.HasSuffix(name, ".zst") || strings.HasSuffix(name, ".lz4") {
		if len(head) == 0 {
			return readCloser{br, raw.Close}, nil // an empty file is empty whatever its name
		}
		raw.Close()
		return nil, fmt.Errorf("%s: the name says compressed but the content is not gzip, zstd or LZ4", name)
	}
	return readCloser{br, raw.Close}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// LineError is a malformed input line, reported as FILE:LINE: reason.
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// MaxLine bounds one input line (a node's block of fills can be large).
const MaxLine = 256 << 20

// Lines calls fn for each line of r (without its line end; blank lines are passed
// over), numbering lines from 1. An error from fn that is not a *LineError is wrapped
// as one naming file and line. A read error (a truncated compressed stream) is
// returned as a LineError at the line where it happened.
func Lines(r io.Reader, file string, fn func(line int, b []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > MaxLine {
				return &LineError{file, n + 1, fmt.Sprintf("line longer than %d bytes", MaxLine)}
			}
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			long = append(long, chunk...)
			line = long
		}
		if len(line) > 0 {
			n++
			b := bytes.TrimRight(line, "\r\n")
			if len(bytes.TrimSpace(b)) > 0 {
				if ferr := fn(n, b); ferr != nil {
					var le *LineError
					if errors.As(ferr, &le) {
						return le
					}
					return &LineError{file, n, ferr.Error()}
				}
			}
		}
		long = long[:0]
		if long != nil && cap(long) > 4<<20 {
			long = nil // do not keep a huge buffer for the rest of the file
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &LineError{file, n + 1, "read: " + err.Error()}
		}
	}
}
