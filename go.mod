module github.com/shoalkv/shoal

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/valyala/bytebufferpool v1.0.0
	golang.org/x/sys v0.49.0
)

require go.uber.org/atomic v1.12.0 // indirect
