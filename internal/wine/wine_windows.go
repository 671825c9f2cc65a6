package wine

import "golang.org/x/sys/windows"

// detected looks for ntdll's wine_get_version export, which only Wine has.
func detected() bool {
	ntdll := windows.NewLazySystemDLL("ntdll.dll")
	return ntdll.NewProc("wine_get_version").Find() == nil
}
