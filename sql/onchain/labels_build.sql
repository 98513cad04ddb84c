-- onchainLegs (store-local index) materialises the label cascade in memory, one row per
-- labelled address: the row of the source with the lowest priority number.
CREATE OR REPLACE TABLE onchain_labels_mem AS
SELECT l.address, l.entity, l.wallet_type, l.confidence, coalesce(l.risk_flag, '') AS risk_flag, l.source,
       l.wallet_type IN ('cex', 'dex', 'defi', 'market_maker', 'bridge') AS venue
FROM onchain_labels l JOIN onchain_label_sources s USING (source)
QUALIFY row_number() OVER (PARTITION BY l.address ORDER BY s.priority, l.source) = 1
ORDER BY l.address;
