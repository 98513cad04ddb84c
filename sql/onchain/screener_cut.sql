-- OnchainScreener: one published board, (chain, window, smart_money_only) = $1, cut from
-- the chain's boards computed in one pass by screener_all.sql (a temporary table of the
-- connection that computed them). The columns are screener.sql's.
SELECT token_address, symbol, name, volume_usd, in_usd, out_usd, unique_holders, tx_count, vol_key, net_key, smart_key
FROM oc_board_family
WHERE board = $1;
