"""gluecat.catalog"""
