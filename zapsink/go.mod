module github.com/shardedsink/shardedsink/zapsink

go 1.26.0

replace github.com/shardedsink/shardedsink => ..

require (
	github.com/shardedsink/shardedsink v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.28.0
)

require (
	go.uber.org/multierr v1.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
