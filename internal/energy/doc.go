// Package energy turns a GPU telemetry exporter's readings into the energy a
// run used: per GPU, from the energy counter's deltas where the exporter has
// one (NVIDIA DCGM's DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, millijoules since
// boot), else from the power gauge integrated over time
// (DCGM_FI_DEV_POWER_USAGE, watts, trapezoids between scrapes). Any span of
// the run — the whole of it, a stage, a capacity window — is read from one
// cumulative series per GPU, so the spans' energies add up to the run's.
// It knows nothing of Prometheus or k6: the caller hands it readings.
package energy
