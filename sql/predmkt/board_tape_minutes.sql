-- Tape index (events): how many events of each type one archive book_events file holds
-- per minute of local_ts, so /events can bound a page's local_ts range before reading.
-- $1 the file's path.
SELECT CAST(floor(local_ts / 60000) AS BIGINT) AS minute, event_type, count(*)
FROM read_parquet($1)
WHERE local_ts IS NOT NULL
GROUP BY ALL;
