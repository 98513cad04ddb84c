-- PredmktOrderbook returns the book snapshot of token $1 nearest at or before $2 (venue
-- ts, epoch ms). When two snapshots share a ts the later-recorded one wins.
SELECT ts, bids, asks
FROM predmkt_book_events
WHERE token_id = $1 AND event_type = 'book' AND ts <= $2
ORDER BY ts DESC, local_ts DESC, seq DESC
LIMIT 1;
