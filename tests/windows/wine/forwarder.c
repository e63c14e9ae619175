/* The API set DLL Wine 8 lacks: its three functions forwarded to kernelbase (see the .def). */
int __stdcall DllMain(void *module, unsigned reason, void *reserved) { return 1; }
