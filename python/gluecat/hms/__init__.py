"""gluecat.hms"""
