// Package deps pins the module's dependencies in go.mod until real imports replace it; it is removed once every dependency is imported by code.
package deps

import (
	_ "github.com/go-jose/go-jose/v4"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx-shopspring-decimal"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/jackc/tern/v2/migrate"
	_ "github.com/julienschmidt/httprouter"
	_ "github.com/oapi-codegen/nullable"
	_ "github.com/peterldowns/pgtestdb"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/shopspring/decimal"
	_ "golang.org/x/term"
)
