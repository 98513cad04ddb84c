// Package duckconn opens DuckDB databases whose every connection reads and writes times
// in UTC.
//
// The lake stores naive TIMESTAMPs that are UTC, and a time.Time bound as a parameter
// reaches DuckDB as a TIMESTAMP WITH TIME ZONE. Comparing the two, or casting one to
// the other, goes through the connection's TimeZone setting, which DuckDB takes from
// the process's local zone (TZ, /etc/localtime). On a machine whose zone is not UTC,
// every window and cursor would then be off by the zone's offset: with
// TZ=America/New_York the liquidations of the medium lake came out different. So
// each connection sets TimeZone to UTC as it is made (the DSN cannot carry it: the
// setting belongs to the ICU extension, which DuckDB does not autoload for a DSN).
package duckconn

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/duckdb/duckdb-go/v2"
)

// initSQL runs on every new connection.
const initSQL = "LOAD icu; SET TimeZone = 'UTC'"

// Connector returns a DuckDB connector for dsn whose connections are in UTC; also, when
// init is not nil, it runs on each connection after that.
func Connector(dsn string, init func(driver.ExecerContext) error) (*duckdb.Connector, error) {
	return duckdb.NewConnector(dsn, func(e driver.ExecerContext) error {
		if _, err := e.ExecContext(context.Background(), initSQL, nil); err != nil {
			return err
		}
		if init != nil {
			return init(e)
		}
		return nil
	})
}

// Open is sql.Open("duckdb", dsn) with every connection in UTC.
func Open(dsn string) (*sql.DB, error) {
	c, err := Connector(dsn, nil)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}
