-- PredmktEvents pages the raw tape in (local_ts, seq, token_id) order.
-- $1 comma-separated token ids ('' for every token), $2 from_ms (inclusive), $3 to_ms
-- (exclusive), $4 event_type ('' for all), $5 $6 $7 the cursor's local_ts, seq and
-- token_id (rows strictly after it; $5 = -1 without a cursor), $8 rows to fetch.
-- The date partitions are filtered with a day of slack on each side so DuckDB reads
-- only the files that can hold the window.
SELECT event_type, token_id, ts, local_ts, seq,
       coalesce(side, ''), coalesce(price, 0), coalesce(size, 0),
       coalesce(best_bid, 0), coalesce(best_ask, 0),
       coalesce(bids, ''), coalesce(asks, ''), coalesce(is_snapshot, 0), coalesce(status, '')
FROM predmkt_book_events
WHERE "date" BETWEEN CAST(make_timestamp($2 * 1000) AS DATE) - 1 AND CAST(make_timestamp($3 * 1000) AS DATE) + 1
  AND local_ts >= $2 AND local_ts < $3
  AND ($1 = '' OR token_id IN (SELECT unnest(string_split($1, ','))))
  AND ($4 = '' OR event_type = $4)
  AND (local_ts > $5 OR (local_ts = $5 AND (seq > $6 OR (seq = $6 AND token_id > $7))))
ORDER BY local_ts, seq, token_id
LIMIT $8;
