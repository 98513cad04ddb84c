-- OnchainLabels: every span of the in-memory cascade (onchain_labels_mem: per address,
-- the source row picked from valid_from until valid_until), read into a Go index once
-- per legs build; lookups pick the span holding their clock.
SELECT address, entity, wallet_type, confidence, risk_flag, source,
       CASE WHEN isfinite(valid_from) THEN epoch_us(valid_from) ELSE -9223372036854775807 END,
       coalesce(epoch_us(valid_until), 9223372036854775807)
FROM onchain_labels_mem
ORDER BY address, valid_from;
