-- PredmktTokenMids returns the latest recorded mid of each listed token at or before now.
-- $1 comma-separated token ids, $2 now (epoch ms, compared to local_ts). A mid is
-- recorded by any tape event that carries both a best bid and a best ask.
SELECT token_id, arg_max((best_bid + best_ask) / 2, (local_ts, seq))
FROM predmkt_book_events
WHERE token_id IN (SELECT unnest(string_split($1, ',')))
  AND local_ts <= $2 AND best_bid > 0 AND best_ask > 0
GROUP BY token_id;
