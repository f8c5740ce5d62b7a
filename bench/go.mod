module github.com/shardedsink/shardedsink/bench

go 1.26.0

require (
	code.cloudfoundry.org/go-diodes v0.0.0-20231113191959-85adc333ee36
	github.com/Workiva/go-datastructures v1.1.7
	github.com/alphadose/zenq/v2 v2.8.4
	github.com/bytedance/gopkg v0.1.4
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/shardedsink/shardedsink v0.1.0
	github.com/shardedsink/shardedsink/ring/zenq v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace (
	github.com/shardedsink/shardedsink => ..
	github.com/shardedsink/shardedsink/ring/zenq => ../ring/zenq
)
