"""What everything else stands on: toy's errors and tinynn's status codes, the C header's
declarations (ffi: no library loaded), the bounds of every number a user gives,
the configurations, the memory plan and the machine's room, files, the MPI
launcher's environment, the default model."""
