"""People check the judge: review push and pull, calibration, prediction-powered estimates."""
