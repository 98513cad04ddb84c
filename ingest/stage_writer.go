package ingest

import "context"

// The writer goroutine: Append only copies a row into a batch and counts it; the
// writer formats the rows into the bulk files and starts their loads, so that on two
// cores the loader's parsing and the formatting run side by side. Everything else
// that uses the stage's connection first calls sync, which hands over the batch being
// filled and waits until the writer has loaded every pending row (the writer is then
// idle until the next batch). The writer's first error is returned by every later
// sync.

// batchRows is the number of rows handed to the writer at once.
const batchRows = 512

type batchRow struct {
	st   *staged
	v, p int // offsets of the row's values and partition values
	ord  int64
}

type stageBatch struct {
	rows  []batchRow
	vals  []any
	parts []string
}

type stageMsg struct {
	batch *stageBatch
	reply chan error // a sync: load everything, then answer
}

// send hands the batch being filled to the writer, starting it on first use.
func (s *Stage) send() error {
	if s.cur == nil {
		return nil
	}
	if s.work == nil {
		s.work = make(chan stageMsg, 8)
		s.done = make(chan struct{})
		go s.writer()
	}
	s.work <- stageMsg{batch: s.cur}
	s.cur = nil
	return nil
}

// sync waits until every row appended so far is in its staging table.
func (s *Stage) sync() error {
	if err := s.send(); err != nil {
		return err
	}
	if s.work == nil {
		return nil // nothing was ever appended
	}
	reply := make(chan error)
	s.work <- stageMsg{reply: reply}
	return <-reply
}

// stop syncs and ends the writer (Close).
func (s *Stage) stop() {
	if s.work == nil {
		return
	}
	s.sync() //nolint:errcheck // the rows are dropped anyway
	close(s.work)
	<-s.done
	s.work = nil
}

func (s *Stage) writer() {
	defer close(s.done)
	for m := range s.work {
		if m.batch != nil {
			if s.werr != nil {
				continue
			}
			b := m.batch
			for _, r := range b.rows {
				t := r.st.t
				if err := s.appendRow(r.st, b.vals[r.v:r.v+len(t.Columns)], b.parts[r.p:r.p+len(t.Partitions)], r.ord); err != nil {
					s.werr = err
					break
				}
			}
			continue
		}
		if s.werr == nil {
			s.werr = s.drain()
		}
		m.reply <- s.werr
	}
}

// drain loads every table's pending rows and flushes the appenders.
func (s *Stage) drain() error {
	if err := s.wait(); err != nil {
		return err
	}
	for _, st := range s.tables {
		path, q, rows, err := st.detach()
		if err != nil {
			return err
		}
		if rows > 0 {
			if err := s.loadFile(context.Background(), st.t.Name, path, q, rows); err != nil {
				return err
			}
		}
		if st.app != nil {
			if err := st.app.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}
