-- Tape index: the ts and local_ts span of every row of one archive file (trades or
-- book_events), so a windowed query opens only the files that can hold the window.
-- $1 the file's path. NULL spans mean an empty file. The row count sizes the index's
-- arrays exactly.
SELECT min(ts), max(ts), min(local_ts), max(local_ts), count(*)
FROM read_parquet($1);
