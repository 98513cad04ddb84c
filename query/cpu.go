package query

import "time"

// ProcessCPU is the user and system CPU time the process has used so far, DuckDB's
// threads included (0 where it is not measured): mdq rebuild's split of its cost
// between the days' tables and the hour's boards.
func ProcessCPU() time.Duration { return processCPU() }
