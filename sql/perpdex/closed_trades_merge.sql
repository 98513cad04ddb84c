-- PublishPerpdexClosedTrades, one bucket of wallets ($1 <= wallet < $2): the bucket's
-- perpdex_closed_trades file. The trades recomputed (ct_parts, closed_trades_parts.sql:
-- each the sum of its parts, in the columns of closed_trades.sql) and the trades of the
-- previous file that were over before the restart date (ct_old_kept): per (wallet,
-- asset), those numbered below its checkpoint trade, which no later fill can change.
SELECT wallet, asset, trade_no,
       CASE WHEN arg_min(first_dir, (first_time, first_tid, first_ord)) > 0 THEN 'long' ELSE 'short' END AS direction,
       min(first_time) AS open_ts,
       max(last_time) AS close_ts,
       sum(open_notional) / nullif(sum(open_size), 0) AS entry_price,
       sum(close_notional) / nullif(sum(close_size), 0) AS exit_price,
       max(max_size_token) AS max_size_token,
       max(max_size_usd) AS max_size_usd,
       sum(volume_usd) AS volume_usd,
       sum(realized_pnl) AS realized_pnl,
       sum(total_fee) AS total_fee,
       sum(fill_count)::BIGINT AS fill_count,
       arg_max(last_pos, (last_time, last_tid, last_ord)) < 1e-9 AS is_complete
FROM ct_parts
WHERE wallet >= $1 AND wallet < $2
GROUP BY wallet, asset, trade_no
UNION ALL
SELECT wallet, asset, trade_no, direction, open_ts, close_ts, entry_price, exit_price,
       max_size_token, max_size_usd, volume_usd, realized_pnl, total_fee, fill_count, is_complete
FROM ct_old_kept
WHERE wallet >= $1 AND wallet < $2
