"""gluecat.store"""
