/// Decant's release version ("major.minor.patch"), as `decant --version` prints it.
public let decantVersion = "0.2.0"
