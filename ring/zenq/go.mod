module github.com/shardedsink/shardedsink/ring/zenq

go 1.26.0

require (
	github.com/alphadose/zenq/v2 v2.8.4
	github.com/shardedsink/shardedsink v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/shardedsink/shardedsink => ../..
