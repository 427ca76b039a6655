"""The dashboard's views, one module each, all drawn from one `Reading`."""
