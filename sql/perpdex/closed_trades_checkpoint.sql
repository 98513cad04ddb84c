-- PublishPerpdexClosedTrades: the checkpoint rows of one bucket at the newest fills
-- date (perpdex_closed_trades_checkpoint), from its parts before that date
-- (closed_trades_parts.sql, the previous checkpoint's rows included): per (wallet,
-- asset), its latest trade, as the sums of its legs before the date.
SELECT wallet, asset, trade_no,
       min(first_time) AS first_time,
       arg_min(first_tid, (first_time, first_tid, first_ord)) AS first_tid,
       arg_min(first_ord, (first_time, first_tid, first_ord)) AS first_ord,
       arg_min(first_dir, (first_time, first_tid, first_ord)) AS first_dir,
       max(last_time) AS last_time,
       arg_max(last_tid, (last_time, last_tid, last_ord)) AS last_tid,
       arg_max(last_ord, (last_time, last_tid, last_ord)) AS last_ord,
       arg_max(last_pos, (last_time, last_tid, last_ord)) AS last_pos,
       sum(open_notional) AS open_notional,
       sum(open_size) AS open_size,
       sum(close_notional) AS close_notional,
       sum(close_size) AS close_size,
       max(max_size_token) AS max_size_token,
       max(max_size_usd) AS max_size_usd,
       sum(volume_usd) AS volume_usd,
       sum(realized_pnl) AS realized_pnl,
       sum(total_fee) AS total_fee,
       sum(fill_count)::BIGINT AS fill_count
FROM ct_parts
WHERE NOT late
GROUP BY wallet, asset, trade_no
QUALIFY trade_no = max(trade_no) OVER (PARTITION BY wallet, asset)
