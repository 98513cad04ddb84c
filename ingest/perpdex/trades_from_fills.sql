-- The public tape of one date partition, derived from the stored fills: one row per
-- trade id. Both sides share the tid; the buyer is the B fill's wallet, the seller the
-- A fill's; the taker side is the crossed fill's side (or the opposite of the maker's
-- when only the maker's fill is known). Fills carry no recorder time, so local_ts is
-- the venue time, and seq is the trade id (increasing with time on each coin).
-- min() everywhere keeps the result deterministic should a trade carry odd fills.
SELECT
    min(coin) AS coin,
    epoch_ms(min("time")) AS ts,
    epoch_ms(min("time")) AS local_ts,
    tid AS seq,
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
