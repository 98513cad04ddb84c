-- The trades reconstructed from fills (one row per position cycle of a wallet on one
-- asset), for the wallets $1 <= wallet < $2 (a range the fills' wallet-sorted row
-- groups prune on), from their fills at or before $3: a per-wallet read at a past clock
-- (closed_trades_wallet_at.sql) passes that clock, so a trade still open then reads as
-- it stood. The published table perpdex_closed_trades holds the same trades for every
-- fill, computed incrementally by closed_trades_parts.sql and closed_trades_merge.sql
-- (the same legs and trade starts, continued from a checkpoint); tests hold it equal to
-- this query over all the fills.
-- A fill is split into legs: the part that reduces an open position (a "close" leg)
-- and the part that opens or adds to one (an "open" leg). A flip (Long > Short,
-- Short > Long) has both: its close leg ends the old trade and its open leg starts the
-- next. A trade starts at an open leg from flat, at the open leg of a flip, or at the
-- first fill the lake holds for (wallet, asset). Fees are split between the legs of a
-- flip in proportion to size; closed_pnl belongs to the close leg. A position is flat
-- when its size is below 1e-9 tokens.
WITH f AS (
    SELECT wallet, coin, time, tid, px, sz, fee, closed_pnl, start_position,
           start_position + CASE WHEN side = 'B' THEN sz ELSE -sz END AS end_position,
           row_number() OVER (PARTITION BY wallet, coin ORDER BY time, tid) AS rn
    FROM perpdex_fills
    WHERE sz > 0 AND wallet >= $1 AND wallet < $2 AND time <= $3::TIMESTAMP
), g AS (
    SELECT *,
           CASE WHEN abs(start_position) < 1e-9 THEN 0 ELSE sign(start_position) END AS s0,
           CASE WHEN abs(end_position) < 1e-9 THEN 0 ELSE sign(end_position) END AS s1
    FROM f
), legs AS (
    -- Close legs: reduce, close or the closing half of a flip.
    SELECT wallet, coin, time, tid, 0 AS ord, px, 'close' AS kind,
           CASE WHEN s1 = -s0 THEN abs(start_position) ELSE sz END AS leg_sz,
           fee * (CASE WHEN s1 = -s0 THEN abs(start_position) ELSE sz END) / sz AS leg_fee,
           closed_pnl AS leg_pnl,
           abs(start_position) AS pos_before,
           CASE WHEN s1 = -s0 THEN 0.0 ELSE abs(end_position) END AS pos_after,
           s0 AS dir,
           CASE WHEN rn = 1 THEN 1 ELSE 0 END AS starts
    FROM g
    WHERE s0 <> 0 AND (s1 <> s0 OR abs(end_position) < abs(start_position))
    UNION ALL
    -- Open legs: open from flat, add, or the opening half of a flip.
    SELECT wallet, coin, time, tid, 1 AS ord, px, 'open' AS kind,
           CASE WHEN s0 <> 0 AND s1 = -s0 THEN abs(end_position) ELSE sz END AS leg_sz,
           fee * (CASE WHEN s0 <> 0 AND s1 = -s0 THEN abs(end_position) ELSE sz END) / sz AS leg_fee,
           CASE WHEN s0 = 0 THEN closed_pnl ELSE 0.0 END AS leg_pnl,
           CASE WHEN s0 = s1 THEN abs(start_position) ELSE 0.0 END AS pos_before,
           abs(end_position) AS pos_after,
           s1 AS dir,
           CASE WHEN s0 = 0 OR s1 = -s0 OR rn = 1 THEN 1 ELSE 0 END AS starts
    FROM g
    WHERE s1 <> 0 AND (s0 = 0 OR s1 = -s0 OR abs(end_position) > abs(start_position))
), numbered AS (
    SELECT *,
           sum(starts) OVER (PARTITION BY wallet, coin ORDER BY time, tid, ord
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS trade_no
    FROM legs
)
SELECT wallet,
       coin AS asset,
       trade_no,
       CASE WHEN arg_min(dir, (time, tid, ord)) > 0 THEN 'long' ELSE 'short' END AS direction,
       min(time) AS open_ts,
       max(time) AS close_ts,
       sum(leg_sz * px) FILTER (WHERE kind = 'open') / nullif(sum(leg_sz) FILTER (WHERE kind = 'open'), 0) AS entry_price,
       sum(leg_sz * px) FILTER (WHERE kind = 'close') / nullif(sum(leg_sz) FILTER (WHERE kind = 'close'), 0) AS exit_price,
       max(greatest(pos_before, pos_after)) AS max_size_token,
       max(greatest(pos_before, pos_after) * px) AS max_size_usd,
       sum(leg_sz * px) AS volume_usd,
       sum(leg_pnl) AS realized_pnl,
       sum(leg_fee) AS total_fee,
       count(*)::BIGINT AS fill_count,
       arg_max(pos_after, (time, tid, ord)) < 1e-9 AS is_complete
FROM numbered
GROUP BY wallet, coin, trade_no
