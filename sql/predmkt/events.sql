-- PredmktEvents pages the raw tape in (local_ts, seq, token_id) order.
-- $1 comma-separated token ids ('' for every token), $2 from_ms (inclusive), $3 to_ms
-- (exclusive), $4 event_type ('' for all), $5 $6 $7 the cursor's local_ts, seq and
-- token_id (rows strictly after it; $5 = -1 without a cursor), $8 rows to fetch,
-- $9 $10 the first and last date partition whose files hold rows with local_ts in the
-- window (from the tape index's per-file local_ts spans), so only those are opened.
-- The cursor predicate leads with local_ts >= $5, implied by the exact test after it,
-- because DuckDB hands a plain comparison to the Parquet scan and not an OR.
--
-- The eight numbers travel as themselves (formatting them as text was most of
-- DuckDB's work on a page: a double costs about 200 ns), and the six texts as one
-- value, since each text value is a cgo call and two copies on the way to Go: the byte
-- lengths of event_type, token_id, side, status and bids, each followed by a comma,
-- then the six texts back to back (asks last). PredmktEvents keeps the strings as
-- slices of that value.
SELECT ts, local_ts, seq, CAST(coalesce(is_snapshot, 0) AS BIGINT),
       coalesce(price, 0), coalesce(size, 0), coalesce(best_bid, 0), coalesce(best_ask, 0),
       concat(strlen(event_type), ',', strlen(token_id), ',', strlen(coalesce(side, '')), ',',
              strlen(coalesce(status, '')), ',', strlen(coalesce(bids, '')), ',',
              event_type, token_id, coalesce(side, ''), coalesce(status, ''), coalesce(bids, ''), coalesce(asks, ''))
FROM predmkt_book_events
WHERE "date" BETWEEN CAST($9 AS DATE) AND CAST($10 AS DATE)
  AND local_ts >= $2 AND local_ts < $3
  AND ($1 = '' OR token_id IN (SELECT unnest(string_split($1, ','))))
  AND ($4 = '' OR event_type = $4)
  AND local_ts >= $5
  AND (local_ts > $5 OR (local_ts = $5 AND (seq > $6 OR (seq = $6 AND token_id > $7))))
ORDER BY local_ts, seq, token_id
LIMIT $8;
