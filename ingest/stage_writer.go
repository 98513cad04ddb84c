package ingest

// The writer goroutine: Append only copies a row into a batch and counts it; the
// writer formats the rows into the bulk files of their partitions, so that on two
// cores the loader's parsing and the formatting run side by side. Everything else
// that uses the stage's connection or its files first calls sync, which hands over
// the batch being filled and waits until the writer has written every pending row
// (the writer is then idle until the next batch). The writer's first error is
// returned by every later sync. A mark (Mark, Savepoint) is a message in the same
// queue, so the writer notes how far each file had got exactly at it.

// batchRows is the number of rows handed to the writer at once.
const batchRows = 512

type batchRow struct {
	st    *staged
	v, p  int // offsets of the row's values (vals, or tvals when typed) and partition values
	ord   int64
	typed bool // appended as Vals (AppendVals)
}

type stageBatch struct {
	rows  []batchRow
	vals  []any
	tvals []Val
	parts []string
}

type stageMsg struct {
	batch *stageBatch
	mark  bool       // note every file's position at seq
	seq   int64      // the mark
	reply chan error // a sync: write everything, then answer
}

// start starts the writer on first use.
func (s *Stage) start() {
	if s.work == nil {
		s.work = make(chan stageMsg, 8)
		s.done = make(chan struct{})
		go s.writer()
	}
}

// send hands the batch being filled to the writer.
func (s *Stage) send() error {
	if s.cur == nil {
		return nil
	}
	s.start()
	s.work <- stageMsg{batch: s.cur}
	s.cur = nil
	return nil
}

// markHere has the writer note every bulk file's position at the current sequence,
// after the rows appended so far.
func (s *Stage) markHere() {
	s.send() //nolint:errcheck // send does not fail
	s.start()
	s.work <- stageMsg{mark: true, seq: s.seq}
}

// sync waits until every row appended so far is written (and readable).
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
		switch {
		case m.batch != nil:
			b := m.batch
			if s.werr == nil {
				s.writeBatch(b)
			}
			b.rows, b.vals, b.tvals, b.parts = b.rows[:0], b.vals[:0], b.tvals[:0], b.parts[:0]
			select {
			case s.free <- b: // for Append to fill again
			default:
			}
		case m.mark:
			snap := map[*partFile]filePos{}
			for _, st := range s.tables {
				for _, pf := range st.parts {
					if pf.total() > 0 {
						pf.arr.cut()
						snap[pf] = filePos{rows: pf.rows, bytes: pf.bytes, longest: pf.longest, recs: len(pf.arr.recs), arows: pf.arr.n}
					}
				}
			}
			s.marks[m.seq] = snap
		default:
			if s.werr == nil {
				s.werr = s.drain()
			}
			m.reply <- s.werr
		}
	}
}

// writeBatch writes the rows of b (noting the writer's first error).
func (s *Stage) writeBatch(b *stageBatch) {
	for _, r := range b.rows {
		t := r.st.t
		var vals []any
		var tvals []Val
		if r.typed {
			tvals = b.tvals[r.v : r.v+len(t.Columns)]
		} else {
			vals = b.vals[r.v : r.v+len(t.Columns)]
		}
		if err := s.appendRow(r.st, vals, tvals, b.parts[r.p:r.p+len(t.Partitions)], r.ord); err != nil {
			s.werr = err
			break
		}
	}
}

// drain flushes every bulk file and appender, so that what was written can be read.
func (s *Stage) drain() error {
	for _, st := range s.tables {
		for _, pf := range st.parts {
			if err := pf.flush(); err != nil {
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
