//go:build !duckdb_arrow

package ingest

import "context"

// Without the duckdb_arrow build tag every row takes the CSV (stage_arrow.go).

const arrowOn = false

const arrowBudget int64 = 0

type arrowTable struct{}

type arrowState struct {
	recs []struct{}
	n    int64
}

func (s *Stage) addArrow(*staged, []Val, []string, int64) (bool, error) { return false, nil }

func (a *arrowState) cut()                       {}
func (a *arrowState) truncate(recs int, n int64) {}
func (a *arrowState) release()                   {}

func (s *Stage) arrowView(context.Context, *staged, *partFile, string) (string, func(), error) {
	panic("no Arrow staging without the duckdb_arrow tag")
}
