-- PublishPerpdexClosedTrades, one bucket of wallets ($1 <= wallet < $2) at a time: the
-- legs of closed_trades.sql (the same split of fills into close and open legs, the
-- same trade starts) from the fills at or after $3 (the start of the restart date; the
-- beginning of time for a full build) and at or before $4, continued from the
-- checkpoint at $3 (ct_cp_in: per (wallet, asset) with fills before $3, its latest
-- trade's number and partial sums), aggregated per trade and side of $5 (the start of
-- the newest fills date: the legs before it make the next checkpoint); $6 is $3's date
-- (the fills partitions read: a date's file holds that date's fills). A pair in the
-- checkpoint continues its trade: its first fill here is not its first fill ever, and
-- its trades are numbered on from the checkpoint's. The checkpoint rows are returned
-- too, as parts before $5, so a trade's parts sum to the whole of it.
WITH cp AS (
    SELECT * FROM ct_cp_in WHERE wallet >= $1 AND wallet < $2
), f AS (
    SELECT wallet, coin, time, tid, px, sz, fee, closed_pnl, start_position,
           start_position + CASE WHEN side = 'B' THEN sz ELSE -sz END AS end_position,
           row_number() OVER (PARTITION BY wallet, coin ORDER BY time, tid) AS rn
    FROM perpdex_fills
    WHERE sz > 0 AND wallet >= $1 AND wallet < $2 AND date >= CAST($6 AS DATE) AND time >= $3::TIMESTAMP AND time <= $4::TIMESTAMP
), g AS (
    SELECT f.*,
           coalesce(cp.trade_no, 0) AS base,
           f.rn = 1 AND cp.wallet IS NULL AS first_ever,
           CASE WHEN abs(f.start_position) < 1e-9 THEN 0 ELSE sign(f.start_position) END AS s0,
           CASE WHEN abs(f.end_position) < 1e-9 THEN 0 ELSE sign(f.end_position) END AS s1
    FROM f LEFT JOIN cp ON cp.wallet = f.wallet AND cp.asset = f.coin
), legs AS (
    -- Close legs: reduce, close or the closing half of a flip.
    SELECT wallet, coin, time, tid, 0 AS ord, px, 'close' AS kind, base,
           CASE WHEN s1 = -s0 THEN abs(start_position) ELSE sz END AS leg_sz,
           fee * (CASE WHEN s1 = -s0 THEN abs(start_position) ELSE sz END) / sz AS leg_fee,
           closed_pnl AS leg_pnl,
           abs(start_position) AS pos_before,
           CASE WHEN s1 = -s0 THEN 0.0 ELSE abs(end_position) END AS pos_after,
           s0 AS dir,
           CASE WHEN first_ever THEN 1 ELSE 0 END AS starts
    FROM g
    WHERE s0 <> 0 AND (s1 <> s0 OR abs(end_position) < abs(start_position))
    UNION ALL
    -- Open legs: open from flat, add, or the opening half of a flip.
    SELECT wallet, coin, time, tid, 1 AS ord, px, 'open' AS kind, base,
           CASE WHEN s0 <> 0 AND s1 = -s0 THEN abs(end_position) ELSE sz END AS leg_sz,
           fee * (CASE WHEN s0 <> 0 AND s1 = -s0 THEN abs(end_position) ELSE sz END) / sz AS leg_fee,
           CASE WHEN s0 = 0 THEN closed_pnl ELSE 0.0 END AS leg_pnl,
           CASE WHEN s0 = s1 THEN abs(start_position) ELSE 0.0 END AS pos_before,
           abs(end_position) AS pos_after,
           s1 AS dir,
           CASE WHEN s0 = 0 OR s1 = -s0 OR first_ever THEN 1 ELSE 0 END AS starts
    FROM g
    WHERE s1 <> 0 AND (s0 = 0 OR s1 = -s0 OR abs(end_position) > abs(start_position))
), numbered AS (
    SELECT *,
           base + sum(starts) OVER (PARTITION BY wallet, coin ORDER BY time, tid, ord
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS trade_no
    FROM legs
)
SELECT wallet, coin AS asset, CAST(trade_no AS BIGINT) AS trade_no, time >= $5::TIMESTAMP AS late,
       min(time) AS first_time,
       arg_min(tid, (time, tid, ord)) AS first_tid,
       arg_min(ord, (time, tid, ord)) AS first_ord,
       arg_min(dir, (time, tid, ord)) AS first_dir,
       max(time) AS last_time,
       arg_max(tid, (time, tid, ord)) AS last_tid,
       arg_max(ord, (time, tid, ord)) AS last_ord,
       arg_max(pos_after, (time, tid, ord)) AS last_pos,
       sum(leg_sz * px) FILTER (WHERE kind = 'open') AS open_notional,
       sum(leg_sz) FILTER (WHERE kind = 'open') AS open_size,
       sum(leg_sz * px) FILTER (WHERE kind = 'close') AS close_notional,
       sum(leg_sz) FILTER (WHERE kind = 'close') AS close_size,
       max(greatest(pos_before, pos_after)) AS max_size_token,
       max(greatest(pos_before, pos_after) * px) AS max_size_usd,
       sum(leg_sz * px) AS volume_usd,
       sum(leg_pnl) AS realized_pnl,
       sum(leg_fee) AS total_fee,
       count(*)::BIGINT AS fill_count
FROM numbered
GROUP BY wallet, coin, trade_no, late
UNION ALL
SELECT wallet, asset, trade_no, false AS late, first_time, first_tid, first_ord, first_dir,
       last_time, last_tid, last_ord, last_pos, open_notional, open_size, close_notional,
       close_size, max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee, fill_count
FROM cp
