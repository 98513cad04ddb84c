-- OnchainLabels: every span of the published cascade (onchain_label_spans: per
-- address, the source row picked from valid_from until valid_until), read into a Go
-- index once per publication; lookups pick the span holding their clock.
SELECT address, entity, wallet_type, confidence, risk_flag, source,
       coalesce(epoch_us(valid_from), -9223372036854775807),
       coalesce(epoch_us(valid_until), 9223372036854775807)
FROM onchain_label_spans
ORDER BY address, valid_from NULLS FIRST;
