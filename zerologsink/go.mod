module github.com/shardedsink/shardedsink/zerologsink

go 1.26.0

replace github.com/shardedsink/shardedsink => ..

require (
	github.com/rs/zerolog v1.35.1
	github.com/shardedsink/shardedsink v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
