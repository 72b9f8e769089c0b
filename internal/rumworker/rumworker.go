// Package rumworker consumes the two RUM queues: the rebatcher takes the beacon queue in large
// batches and appends each website's page views to its log, asking the aggregator to fold it;
// the aggregator compacts each website's log into its day objects (the rollup engine's tables,
// internal/rumstore).
package rumworker
