-- OnchainDiscover: one published board, (chain, window) = $1, cut from the chain's
-- boards computed in one pass by discover_all.sql (a temporary table of the connection
-- that computed them). The columns are discover.sql's.
SELECT address, inflow, outflow, tx_count, tokens_traded, tokens_profitable, first_seen, last_active, realized_pnl,
       in_key, out_key, net_key, pnl_key, vol_key
FROM oc_board_family
WHERE board = $1;
