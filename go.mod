module github.com/cursorkit/cursorkit

go 1.27.0

require (
	github.com/spf13/pflag v1.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
