package embedpg

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Exec runs one statement on dbURL over a connection of its own, outside
// any transaction (CREATE DATABASE and DROP DATABASE need that), for tools
// that manage scratch databases on a cluster without psql.
func Exec(ctx context.Context, dbURL, sql string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// Version is the server's version() on dbURL.
func Version(ctx context.Context, dbURL string) (string, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var v string
	err = conn.QueryRow(ctx, "SELECT version()").Scan(&v)
	return v, err
}
