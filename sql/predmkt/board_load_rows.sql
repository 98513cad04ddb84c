-- PredmktLoadBoard: the rows of the board file $1 from its footer, the capacity its
-- entries are read into (growing the slice of about 376,000 entries at large by appends
-- cost more than the read itself: each growth copies into pages the kernel must fault
-- in).
SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata($1);
