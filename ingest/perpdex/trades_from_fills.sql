-- The public tape of one date partition, derived from the stored fills: one row per
-- trade id. Both sides share the tid; the buyer is the B fill's wallet, the seller the
-- A fill's; the taker side is the crossed fill's side (or the opposite of the maker's
-- when only the maker's fill is known). Fills carry no recorder time: a trade already
-- on the stored tape (recorded live) keeps its local_ts and seq; a new one gets the
-- venue time as local_ts and the trade id as seq (it increases with time on each coin).
-- min() everywhere keeps the result deterministic should a trade carry odd fills.
-- The tape placeholder (below) is the date's stored tape, or an empty relation.
WITH f AS (
    SELECT
        min(coin) AS coin,
        epoch_ms(min("time")) AS ts,
        coalesce(min(side) FILTER (WHERE crossed),
                 CASE min(side) FILTER (WHERE NOT crossed) WHEN 'B' THEN 'A' ELSE 'B' END) AS side,
        min(px) AS px,
        max(sz) AS sz,
        min(hash) AS hash,
        tid,
        min(wallet) FILTER (WHERE side = 'B') AS buyer,
        min(wallet) FILTER (WHERE side = 'A') AS seller
    FROM read_parquet(?)
    GROUP BY tid
)
SELECT f.coin, f.ts, coalesce(t.local_ts, f.ts) AS local_ts, coalesce(t.seq, f.tid) AS seq,
       f.side, f.px, f.sz, f.hash, f.tid, f.buyer, f.seller
FROM f LEFT JOIN {{tape}} t ON t.tid = f.tid
