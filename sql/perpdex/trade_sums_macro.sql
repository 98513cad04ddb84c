-- pd_trade_sums(cls, direction, pnl, dur): the counts and exact sums of a group of
-- complete trades, as one STRUCT; it is an aggregate, for a grouped SELECT. cls is a
-- trade's class ('w' a win, 'l' a loss, 'f' flat), direction 'long' or 'short', pnl its
-- realized PnL as DECIMAL(38, 10) and dur its duration in seconds. board.sql sums it per
-- wallet over a window's trades and trades_days.sql per (wallet, day) for the trades'
-- carry, which the board's window "all" adds to its own day's sums: one definition, so
-- the two count and sum alike. non_w and non_l are the trades that are not wins (not
-- losses), which the streaks read.
CREATE OR REPLACE MACRO pd_trade_sums(cls, direction, pnl, dur) AS struct_pack(
    n            := count(*),
    wins         := count(*) FILTER (WHERE cls = 'w'),
    losses       := count(*) FILTER (WHERE cls = 'l'),
    longs        := count(*) FILTER (WHERE direction = 'long'),
    long_wins    := count(*) FILTER (WHERE direction = 'long' AND cls = 'w'),
    shorts       := count(*) FILTER (WHERE direction = 'short'),
    short_wins   := count(*) FILTER (WHERE direction = 'short' AND cls = 'w'),
    pnl_x        := coalesce(sum(pnl), 0),
    long_pnl_x   := coalesce(sum(pnl) FILTER (WHERE direction = 'long'), 0),
    short_pnl_x  := coalesce(sum(pnl) FILTER (WHERE direction = 'short'), 0),
    gross_win_x  := coalesce(sum(pnl) FILTER (WHERE cls = 'w'), 0),
    gross_loss_x := coalesce(sum(pnl) FILTER (WHERE cls = 'l'), 0),
    dur_s        := CAST(sum(dur) AS BIGINT),
    non_w        := count(*) FILTER (WHERE cls <> 'w'),
    non_l        := count(*) FILTER (WHERE cls <> 'l')
);
