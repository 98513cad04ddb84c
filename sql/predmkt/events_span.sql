-- PredmktEvents (bounded): the rows events.sql would page, over a local_ts range the
-- tape index's per-minute counts show to hold at least a page, in no order: the caller
-- sorts them in (local_ts, seq, token_id) order and keeps the page. Every token.
-- $1 from_ms (inclusive), $2 the range's end (exclusive), $3 event_type ('' for all),
-- $4 $5 $6 the cursor (local_ts, seq, token_id; $4 = -1 without one), $7 $8 the first
-- and last date partition holding rows of the range. Same columns as events.sql.
SELECT ts, local_ts, seq, CAST(coalesce(is_snapshot, 0) AS BIGINT),
       coalesce(price, 0), coalesce(size, 0), coalesce(best_bid, 0), coalesce(best_ask, 0),
       concat(strlen(event_type), ',', strlen(token_id), ',', strlen(coalesce(side, '')), ',',
              strlen(coalesce(status, '')), ',', strlen(coalesce(bids, '')), ',',
              event_type, token_id, coalesce(side, ''), coalesce(status, ''), coalesce(bids, ''), coalesce(asks, ''))
FROM predmkt_book_events
WHERE "date" BETWEEN CAST($7 AS DATE) AND CAST($8 AS DATE)
  AND local_ts >= $1 AND local_ts < $2
  AND ($3 = '' OR event_type = $3)
  AND local_ts >= $4
  AND (local_ts > $4 OR (local_ts = $4 AND (seq > $5 OR (seq = $5 AND token_id > $6))));
