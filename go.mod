module github.com/shardedsink/shardedsink

go 1.26.0

require (
	code.cloudfoundry.org/go-diodes v0.0.0-20231113191959-85adc333ee36 // indirect
	github.com/Workiva/go-datastructures v1.1.7 // indirect
	github.com/alphadose/zenq/v2 v2.8.4 // indirect
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/bytedance/gopkg v0.1.4 // indirect
	github.com/puzpuzpuz/xsync/v4 v4.5.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
