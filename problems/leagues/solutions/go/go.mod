module tunecon-leagues-tuned

go 1.26.8

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/mattn/go-sqlite3 v1.14.52
)

require filippo.io/edwards25519 v1.2.0 // indirect
